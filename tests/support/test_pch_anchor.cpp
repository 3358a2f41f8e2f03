// Anchor translation unit of the kforge_test_pch target, which only exists to build test_pch.h once.
