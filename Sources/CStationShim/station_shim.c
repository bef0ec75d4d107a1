#include "station_shim.h"
