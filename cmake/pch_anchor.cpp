// Anchor translation unit of the kforge_pch target, which only exists to build cmake/pch.h once.
