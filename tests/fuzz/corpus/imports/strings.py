s = "import a"
t = """
import b
"""
u = f"{x!r:>{w}} {'import c'}"
import d  # import e
