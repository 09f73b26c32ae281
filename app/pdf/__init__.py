"""DANFE, DACTE and DANFSe renderers."""
