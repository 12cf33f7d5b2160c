import \
    requests, \
    lxml.etree
x = [
 import_ ]
rb"\x00" ; import zz
