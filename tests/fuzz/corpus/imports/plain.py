import os, sys
import numpy as np
from PIL import Image
