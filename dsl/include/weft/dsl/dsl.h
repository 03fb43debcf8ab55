// Everything a user needs to write an algorithm.
#pragma once

#include "weft/dsl/buffer.h"
#include "weft/dsl/collective.h"
#include "weft/dsl/contents.h"
#include "weft/dsl/error.h"
#include "weft/dsl/options.h"
#include "weft/dsl/postcondition.h"
#include "weft/dsl/program.h"
#include "weft/dsl/registry.h"
#include "weft/dsl/trace.h"
