#!/usr/bin/env python3
"""The image-text data path's resize and normalisation, by torch: F.interpolate(mode="bilinear",
align_corners=False, antialias=False) on the 0..255 values, then (v / 255 - mean) / std per channel.

Usage: image_resize.py CASE...   with CASE = IN.npy:OUT.npy:HEIGHT:WIDTH:MEAN0,MEAN1,MEAN2:STD0,STD1,STD2
IN.npy holds an [h, w, 3] float32 image (values 0..255); OUT.npy gets the [3, HEIGHT, WIDTH] float32 result.
"""
import sys

import numpy as np
import torch
import torch.nn.functional as F

for case in sys.argv[1:]:
    source, target, height, width, mean, std = case.split(":")
    image = torch.from_numpy(np.load(source)).permute(2, 0, 1).unsqueeze(0)
    resized = F.interpolate(image, size=(int(height), int(width)), mode="bilinear", align_corners=False,
                            antialias=False)[0]
    mean = torch.tensor([float(v) for v in mean.split(",")]).view(3, 1, 1)
    std = torch.tensor([float(v) for v in std.split(",")]).view(3, 1, 1)
    np.save(target, ((resized / 255.0 - mean) / std).to(torch.float32).numpy())
