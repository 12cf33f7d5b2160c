# /// script
# dependencies = ['lit', """multi
# line""", "esc\u00e9\"q"]
# requires-python = '==3.11.*'
# ///
