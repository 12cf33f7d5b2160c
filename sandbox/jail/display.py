# display.py: how a notebook shows a value, for a run's last expression
# (runner.py) and a cell's (sandbox/kernel/kernel.py), built into the
# program. It defines one function and leaves nothing else behind:
#   _rms_display_make() -> (show, figures)
#   show(value, out_dir, stem, limit)  the value's text as a notebook shows
#       it: None for None; a PIL image is saved as OUT_DIR/STEM.png (and its
#       text is None), so is a matplotlib figure; anything else is its repr
#       (a pandas DataFrame's is pandas' own, truncated as pandas does), cut
#       at limit bytes of UTF-8 with a marker. Returns (text, truncated).
#   figures(out_dir, prefix)  every matplotlib figure still open is saved
#       as OUT_DIR/PREFIXfigure-N.png (N its number) and closed, as a
#       notebook's inline backend does at the end of a cell; one the script
#       drew itself (savefig to a PNG, canvas.draw: its canvas has a
#       renderer) is only closed, so that a chart saved as bar.png does not
#       come back twice. Returns how many were saved.
# Nothing is imported that the script did not import: PIL and matplotlib
# are looked up in sys.modules.
def _rms_display_make():
    import os, sys

    def _png(fig_or_image, path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if hasattr(fig_or_image, 'savefig'):
            fig_or_image.savefig(path, format='png')
        else:
            fig_or_image.save(path, format='PNG')

    def _is_pil(value):
        image = sys.modules.get('PIL.Image')
        return image is not None and isinstance(value, getattr(image, 'Image', ()))

    def _is_figure(value):
        figure = sys.modules.get('matplotlib.figure')
        return figure is not None and isinstance(value, getattr(figure, 'Figure', ()))

    def show(value, out_dir, stem, limit):
        if value is None:
            return None, False
        if _is_pil(value) or _is_figure(value):
            try:
                _png(value, os.path.join(out_dir, stem + '.png'))
                if _is_figure(value):
                    plt = sys.modules.get('matplotlib.pyplot')
                    if plt is not None:
                        plt.close(value)
                return None, False
            except Exception as e:
                sys.stderr.write('[runmyscript] the value could not be saved as an image: %r\n' % (e,))
        text = repr(value)
        data = text.encode('utf-8', 'surrogateescape')
        if len(data) <= limit:
            return text, False
        cut = data[:limit].decode('utf-8', 'ignore')
        return cut + '\n[runmyscript] the value is cut here (value_bytes = %d)' % limit, True

    def figures(out_dir, prefix):
        plt = sys.modules.get('matplotlib.pyplot')
        if plt is None:
            return 0
        n = 0
        for num in list(plt.get_fignums()):
            fig = plt.figure(num)
            if getattr(fig.canvas, 'renderer', None) is not None:
                plt.close(fig)
                continue
            try:
                _png(fig, os.path.join(out_dir, '%sfigure-%d.png' % (prefix, num)))
                n += 1
            except Exception as e:
                sys.stderr.write('[runmyscript] figure %d could not be saved: %r\n' % (num, e))
            plt.close(fig)
        return n

    return show, figures
