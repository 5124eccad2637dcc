"""How results are named and written: the one column registry and the frame and file writers.

`columns.py` names every result column once (JSON key, unit scale, CSV header); `frames.py`
builds large DataFrame columns without waste; `export.py` writes JSON records and CSV files.
"""
