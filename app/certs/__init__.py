"""A1 certificates: opening .pfx files, keeping them safe, mutual TLS."""
