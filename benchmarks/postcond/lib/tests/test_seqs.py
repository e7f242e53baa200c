from minilib.seqs import dedupe, running_max


def test_running_max():
    assert running_max([]) == []
    assert running_max([3]) == [3]
    assert running_max([1, 3, 2, 5, 4]) == [1, 3, 3, 5, 5]
    assert running_max([5, 4, 3]) == [5, 5, 5]
    assert running_max([-2, -5, -1]) == [-2, -2, -1]
    assert running_max([2, 2, 1]) == [2, 2, 2]


def test_dedupe():
    assert dedupe([]) == []
    assert dedupe([1, 2, 1, 3, 2]) == [1, 2, 3]
    assert dedupe(["b", "a", "b"]) == ["b", "a"]
    assert dedupe([4, 4, 4]) == [4]
