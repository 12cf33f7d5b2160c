"""check_png.py: decode PNGs with the standard library only (8-bit RGB/RGBA/
grey, non-interlaced), for tests that compare pixels.

    check_png.py mirror ORIGINAL FLIPPED   exit 0 when FLIPPED is ORIGINAL
                                           mirrored left to right, pixel
                                           for pixel
    check_png.py size FILE                 prints WIDTHxHEIGHT
"""
import struct
import sys
import zlib


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or interlace:
        raise ValueError("only 8-bit non-interlaced PNGs")
    bpp = {0: 1, 2: 3, 4: 2, 6: 4}[ctype]
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pr) & 255
        rows.append(bytes(line))
        prev = line
    # Normalise to RGBA tuples per pixel.
    def px(row, x):
        p = row[x * bpp:(x + 1) * bpp]
        if bpp == 1:
            return (p[0], p[0], p[0], 255)
        if bpp == 2:
            return (p[0], p[0], p[0], p[1])
        if bpp == 3:
            return (p[0], p[1], p[2], 255)
        return tuple(p)
    return w, h, [[px(r, x) for x in range(w)] for r in rows]


def main():
    if sys.argv[1] == "size":
        w, h, _ = decode(sys.argv[2])
        print("%dx%d" % (w, h))
        return 0
    if sys.argv[1] == "mirror":
        w1, h1, a = decode(sys.argv[2])
        w2, h2, b = decode(sys.argv[3])
        if (w1, h1) != (w2, h2):
            print("sizes differ: %dx%d vs %dx%d" % (w1, h1, w2, h2))
            return 1
        for y in range(h1):
            if a[y][::-1] != b[y]:
                print("row %d is not mirrored" % y)
                return 1
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
