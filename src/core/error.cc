#include "ferry/error.h"

namespace ferry {

const char* ErrorCategoryName(ErrorCategory category) {
  switch (category) {
    case ErrorCategory::kInvalidModel: return "InvalidModel";
    case ErrorCategory::kUnsupported: return "Unsupported";
    case ErrorCategory::kInvalidArgument: return "InvalidArgument";
    case ErrorCategory::kResourceExhausted: return "ResourceExhausted";
    case ErrorCategory::kInternal: return "Internal";
  }
  return "Unknown";
}

}  // namespace ferry
