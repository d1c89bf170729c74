// SwiftPM builds a C target from its sources: this is the bundled CLevelDB's one translation
// unit, which compiles the module's header against the `leveldb` product it depends on.
#include "shim.h"
