# Hello: reads the input (the file at SCRIPT_INPUT, also on stdin) and
# writes a file into SCRIPT_OUTPUT, which becomes a download.
import os
import sys

text = open(os.environ["SCRIPT_INPUT"], encoding="utf-8").read()
print("Hello from Python", sys.version.split()[0])
print("The input has", len(text), "characters")
with open(os.path.join(os.environ["SCRIPT_OUTPUT"], "hello.txt"), "w") as f:
    f.write("Hello!\nThe input was:\n" + text)
print("a warning goes to stderr", file=sys.stderr)
