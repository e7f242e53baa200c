"""A bounded stack."""


class BoundedStack:
    """A LIFO stack holding at most ``capacity`` items."""

    def __init__(self, capacity):
        self.capacity = capacity
        self.items = []

    def push(self, item):
        """Push item; return True, or False (stack unchanged) when full."""
        if len(self.items) >= self.capacity:
            return False
        self.items.append(item)
        return True

    def size(self):
        return len(self.items)
