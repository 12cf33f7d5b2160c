# A CSV table, a JSON summary and a small PNG image, with the standard
# library only (the PNG is written by hand: zlib and struct).
import csv, json, os, struct, zlib, math

out = os.environ["SCRIPT_OUTPUT"]
rows = [(x, round(math.sin(x / 5), 4), round(math.cos(x / 5), 4)) for x in range(50)]
with open(os.path.join(out, "waves.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["x", "sin", "cos"])
    w.writerows(rows)
with open(os.path.join(out, "summary.json"), "w") as f:
    json.dump({"rows": len(rows), "max_sin": max(r[1] for r in rows)}, f, indent=2)

W, H = 200, 100
px = bytearray()
for y in range(H):
    px.append(0)  # filter: none
    for x in range(W):
        on = abs(H / 2 - H / 2.5 * math.sin(x / 16) - y) < 2
        px += bytes((20, 90, 200) if on else (245, 245, 240))
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", W, H, 8, 2, 0, 0, 0))
png += chunk(b"IDAT", zlib.compress(bytes(px))) + chunk(b"IEND", b"")
with open(os.path.join(out, "wave.png"), "wb") as f:
    f.write(png)
print("wrote waves.csv, summary.json and wave.png")
