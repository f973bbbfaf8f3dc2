"""Model files: where they live (store), what exists (catalogues), and converters."""
