// Includes itself through a second file: ClProgramTest checks that this is one clear error, not endless recursion.
#include "cycle_b.h"
