#include <gtest/gtest.h>

#include "ferry/session.h"

TEST(SessionSmoke, MissingFileIsInvalidArgument) {
  try {
    ferry::Session::Create("/nonexistent/model.onnx");
    FAIL() << "expected an error";
  } catch (const ferry::Error& e) {
    EXPECT_EQ(e.category(), ferry::ErrorCategory::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model.onnx"), std::string::npos);
  }
}
