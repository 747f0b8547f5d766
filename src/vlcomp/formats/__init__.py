"""Loaders for the benchmark and training files as their authors release them (the ``real`` profile).

Every loader validates each record and stops at the first bad one with a message naming the file and the
record (:class:`vlcomp.formats.records.RecordError`); images are read lazily with PIL.
"""
