#!/bin/sh
# Counts the markdown notes under a directory.
find "${1:-.}" -name '*.md' | wc -l
