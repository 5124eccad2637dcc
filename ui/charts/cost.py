"""What a serving configuration costs: USD per million output tokens at a price per
accelerator-hour (the planner ranks by it; the comparison's deployment table shows it).

Vectorised over `engine.serve_sweep` rows (columns hardware, devices, output_tokens_per_s).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

SECONDS_PER_HOUR = 3600.0
TOKENS_PER_MILLION = 1e6


def usd_per_1m_output_tokens(df: pd.DataFrame, price_per_hour: Mapping[str, float | None]):
    """USD per million output tokens: the deployment's hourly price over its hourly output.

    price (USD per accelerator-hour) × devices ÷ (aggregate output tokens/s × 3600 s/h) × 1e6.
    NaN where the accelerator has no price.
    """
    price = df["hardware"].map(lambda h: price_per_hour.get(h)).astype(float)
    per_hour = price * df["devices"]  # USD per hour of the whole deployment
    tokens_per_hour = df["output_tokens_per_s"] * SECONDS_PER_HOUR
    return per_hour / tokens_per_hour * TOKENS_PER_MILLION
