# Stand-in for apricot-select: pomegranate 1.1.2 imports these two names in
# _utils.py for an initialisation (submodular selection) that DenseHMM with
# given parameters never calls. Calling either says so instead of running.
class _Missing:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("apricot stand-in: the benchmark's HMMs never select initial points")


FacilityLocationSelection = _Missing
FeatureBasedSelection = _Missing
