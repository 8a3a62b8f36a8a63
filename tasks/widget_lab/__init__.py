"""The widget lab: pages built with real npm widget libraries, each gating a small dataset (issue 38).

Kept out of the 60-record offline suite and its figures: its records live beside each page
(`pages/<name>/records.jsonl`) and are served by their own app (`sgr offline serve --lab`).
"""
