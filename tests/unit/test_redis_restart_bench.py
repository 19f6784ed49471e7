"""bench.redis_restart's "rate back": the first window after the restart's first event whose rate is
within 10 % of the rate before, so neither the outage's gap nor the burst of overdue changes counts."""

from __future__ import annotations

from bench.redis_restart import SLIDE, back_at


def steady(start: float, end: float, rate: float) -> list[float]:
    return [start + n / rate for n in range(int((end - start) * rate))]


def test_the_rate_is_back_once_the_burst_has_left_the_window() -> None:
    burst = [1.0 + n / 1000 for n in range(300)]  # 300 overdue changes in 0.3 s, then 100 a second
    times = burst + steady(1.3, 20.0, 100)
    back = back_at(times, 100)
    assert back is not None and back > 1.3 + SLIDE - 0.5, back


def test_a_rate_that_stays_low_is_never_back() -> None:
    assert back_at(steady(0.5, 20.0, 50), 100) is None


def test_a_steady_rate_is_back_with_the_first_window() -> None:
    assert back_at(steady(0.5, 20.0, 100), 100) == 0.5 + SLIDE
