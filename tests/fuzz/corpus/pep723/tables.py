# /// script
# dependencies = ["a[x,y]>=1 ; python_version<'4'"]
# [tool.uv]
# exclude-newer = 2024-01-01T00:00:00Z
# x = { a = 1, b = [1, 2] }
# ///
