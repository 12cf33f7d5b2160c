# /// script
# requires-python = ">=3.8"
# dependencies = [
#   "requests<3",
#   "rich",
# ]
# ///
import requests
