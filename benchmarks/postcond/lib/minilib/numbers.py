"""Small integer helpers."""
from __future__ import annotations


def clamp(x, lo, hi):
    """Return x limited to the closed interval [lo, hi] (lo <= hi)."""
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


def gcd(a, b):
    """Greatest common divisor of two non-negative integers (gcd(0, 0) == 0)."""
    while b != 0:
        a, b = b, a % b
    return a


def digit_sum(n):
    """Sum of the decimal digits of a non-negative integer."""
    total = 0
    while n > 0:
        total += n % 10
        n = n // 10
    return total
