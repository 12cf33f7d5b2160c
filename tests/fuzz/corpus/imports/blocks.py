try:
    import yaml
except ImportError:
    pass
if x: import cv2; import sklearn.linear_model as lm
def f():
    from . import rel
    from .. x import y
    from a.b.c import (d,
   e)
