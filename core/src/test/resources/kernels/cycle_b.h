// The other half of cycle_a.h's include cycle.
#include "cycle_a.h"
