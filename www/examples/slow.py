# Prints a line a second for a while: the log arrives live; Stop ends it.
import sys, time

for i in range(1, 31):
    print("tick", i, flush=True)
    if i % 10 == 0:
        print("still going at", i, file=sys.stderr, flush=True)
    time.sleep(1)
print("done")
