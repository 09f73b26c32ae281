"""Parsing and classifying NF-e, CT-e and NFS-e documents into metadata."""
