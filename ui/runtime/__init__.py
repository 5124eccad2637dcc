"""The server's memory after its users leave (the lowest folder of ui/ with words/: imports
nothing else of ui/).

- memo: a self-emptying cache shared by every session for large read-only results.
- sessions: ending the sessions Streamlit lets lapse.
- heap: returning freed memory to the operating system (glibc through ctypes).
"""
