# /// script
# dependencies = []
# ///
# /// script
# dependencies = []
# ///
