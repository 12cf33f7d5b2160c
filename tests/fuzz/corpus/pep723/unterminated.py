# /// script
# dependencies = ["a"]
