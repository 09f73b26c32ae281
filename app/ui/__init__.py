"""The PySide6 desktop interface: the only package that imports Qt."""
