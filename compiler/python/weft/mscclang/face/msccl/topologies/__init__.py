from .topology import Topology  # noqa: F401
from .generic import *  # noqa: F401,F403
from .nvidia import *  # noqa: F401,F403
from .distributed import *  # noqa: F401,F403
