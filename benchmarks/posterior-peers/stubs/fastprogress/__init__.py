# Stand-in for fastprogress: dynamax's ssm.py imports progress_bar, which the
# benchmark never shows (fit_em with verbose=False); fastprogress itself pulls
# in fastcore and python-fasthtml, which the GPU machine lacks.
