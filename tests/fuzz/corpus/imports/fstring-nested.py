print(f"{f'{1}'} {d['k']:{f'{w}'}}")
import after_fstring
print(rf'\{x}')
