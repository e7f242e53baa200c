from minilib.stack import BoundedStack


def test_push_until_full():
    s = BoundedStack(2)
    assert s.push(1) is True
    assert s.push(2) is True
    assert s.push(3) is False
    assert s.items == [1, 2]
    assert s.size() == 2


def test_push_zero_capacity():
    s = BoundedStack(0)
    assert s.push("x") is False
    assert s.items == []
