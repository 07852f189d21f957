"""The video library: folders and files scanned for videos (known by content, so a moved file
keeps its analyses), and the two-stage search across all of them (the text index, then Marlin
in the best windows). The CLI (`marlin-desk library`) and the app call the same functions:

- marlin_desk.library.scan: add, scan, remove, videos, roots, reindex (store only: no model
  stack is imported, so `library list` runs at once);
- marlin_desk.library.search: search_library (and stage_one), LibraryHit, SearchResult.

Sits beside workflows and reaches the model only through it; see docs/library.md.
"""
