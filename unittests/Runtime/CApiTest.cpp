//===- CApiTest.cpp - The C API matches the C++ API -----------------------===//
#include "TestUtil.h"
#include "gopt/runtime/c_api.h"

using namespace gopt::runtime;
using namespace gopt::runtime::testing;

namespace {

std::string negPlanBytes() {
  PlanBuilder b("neg");
  int x = b.addInput("x", DType::kF32, {-1, 3});
  int y = b.addOutput("y", DType::kF32, {-1, 3});
  b.addOp("neg", "negate", {x}, {y});
  return b.proto().SerializeAsString();
}

TEST(CApi, RunsAPlan) {
  std::string bytes = negPlanBytes();
  gopt_plan_t *plan = nullptr;
  ASSERT_EQ(gopt_plan_create_from_bytes(bytes.data(), bytes.size(), &plan),
            nullptr);
  gopt_session_options_t options;
  gopt_session_options_init(&options);
  options.batch_size = 2;
  gopt_session_t *session = nullptr;
  ASSERT_EQ(gopt_session_create(plan, &options, &session), nullptr);
  ASSERT_EQ(gopt_session_input_count(session), 1u);
  const char *name;
  gopt_dtype_t dtype;
  const int64_t *dims;
  size_t rank;
  ASSERT_EQ(gopt_session_input_info(session, 0, &name, &dtype, &dims, &rank),
            nullptr);
  EXPECT_STREQ(name, "x");
  EXPECT_EQ(dtype, GOPT_DTYPE_F32);
  ASSERT_EQ(rank, 2u);
  EXPECT_EQ(dims[0], 2);

  float data[3] = {1, -2, 3};
  int64_t shape[2] = {1, 3};
  ASSERT_EQ(
      gopt_session_bind_input(session, "x", GOPT_DTYPE_F32, shape, 2, data),
      nullptr);
  ASSERT_EQ(gopt_session_run(session), nullptr);
  const void *out;
  const int64_t *outDims;
  size_t outRank;
  ASSERT_EQ(
      gopt_session_get_output(session, "y", &dtype, &outDims, &outRank, &out),
      nullptr);
  ASSERT_EQ(outRank, 2u);
  EXPECT_EQ(outDims[0], 1);
  const float *y = static_cast<const float *>(out);
  EXPECT_EQ(y[0], -1);
  EXPECT_EQ(y[1], 2);
  EXPECT_EQ(y[2], -3);
  gopt_session_release(session);
  gopt_plan_release(plan);
}

TEST(CApi, ErrorsAreStatuses) {
  gopt_plan_t *plan = nullptr;
  gopt_status_t *status = gopt_plan_create_from_file("/no/such.gplan", &plan);
  ASSERT_NE(status, nullptr);
  EXPECT_NE(std::string(gopt_status_message(status)).find("/no/such.gplan"),
            std::string::npos);
  EXPECT_EQ(gopt_status_code(status), static_cast<int>(StatusCode::kNotFound));
  gopt_status_release(status);
  status = gopt_plan_create_from_file(nullptr, &plan);
  ASSERT_NE(status, nullptr);
  gopt_status_release(status);

  std::string bytes = negPlanBytes();
  ASSERT_EQ(gopt_plan_create_from_bytes(bytes.data(), bytes.size(), &plan),
            nullptr);
  gopt_session_t *session = nullptr;
  ASSERT_EQ(gopt_session_create(plan, nullptr, &session), nullptr);
  status = gopt_session_run(session);
  ASSERT_NE(status, nullptr);
  EXPECT_NE(std::string(gopt_status_message(status)).find("missing input 'x'"),
            std::string::npos);
  gopt_status_release(status);
  int64_t badShape[2] = {1, 4};
  float data[4] = {};
  status =
      gopt_session_set_input(session, "x", GOPT_DTYPE_F32, badShape, 2, data);
  ASSERT_NE(status, nullptr);
  gopt_status_release(status);
  status =
      gopt_session_output_info(session, 5, nullptr, nullptr, nullptr, nullptr);
  ASSERT_NE(status, nullptr);
  gopt_status_release(status);
  gopt_session_options_t cuda;
  gopt_session_options_init(&cuda);
  cuda.backend = "cuda";
  gopt_session_t *cudaSession = nullptr;
  status = gopt_session_create(plan, &cuda, &cudaSession);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(cudaSession, nullptr);
  gopt_status_release(status);
  gopt_session_release(session);
  gopt_plan_release(plan);
}

} // namespace
