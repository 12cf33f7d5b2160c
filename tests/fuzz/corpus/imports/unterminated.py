x = """never closed
import nope
