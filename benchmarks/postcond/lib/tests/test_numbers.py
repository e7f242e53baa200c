from minilib.numbers import clamp, digit_sum, gcd


def test_clamp():
    assert clamp(5, 0, 10) == 5
    assert clamp(-3, 0, 10) == 0
    assert clamp(12, 0, 10) == 10
    assert clamp(0, 0, 10) == 0
    assert clamp(10, 0, 10) == 10
    assert clamp(7, 7, 7) == 7


def test_gcd():
    assert gcd(12, 18) == 6
    assert gcd(18, 12) == 6
    assert gcd(7, 13) == 1
    assert gcd(0, 5) == 5
    assert gcd(5, 0) == 5
    assert gcd(0, 0) == 0
    assert gcd(100, 75) == 25


def test_digit_sum():
    assert digit_sum(0) == 0
    assert digit_sum(7) == 7
    assert digit_sum(123) == 6
    assert digit_sum(9999) == 36
    assert digit_sum(1000) == 1
