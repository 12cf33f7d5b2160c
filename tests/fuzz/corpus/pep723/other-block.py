# /// pyproject
# x = 1
# ///
print(1)
