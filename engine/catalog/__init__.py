"""What the models are given: accelerators, models and profiles from the catalogue files.

Specs (`specs.py`: HardwareSpec, ModelSpec), units (`units.py`, the one pint registry), the TOML
readers (`reader.py`, `parse.py`, `hardware_table.py`, `arch_table.py`), id resolution
(`resolve.py`), decoder architectures and their parameter counts (`arch.py`), their shapes as
kernel inputs with the one KV-cache rule (`shapes.py`), Hugging Face config.json families
(`hf_config.py`, `hf_families.py`), CNN layer lists (`cnn.py`) and profiles (`profiles.py`).
"""
