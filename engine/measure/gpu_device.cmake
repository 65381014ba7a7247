# SPDX-License-Identifier: Apache-2.0
# Included by engine/measure/CMakeLists.txt and by the standalone build of tools/gpu/CMakeLists.txt
# (which first defines tb_common_cfg, tb::gpu_module and tb::rpc from the sources it needs).
set(_tb_gpu_dir ${CMAKE_CURRENT_LIST_DIR})

# The device side's dependency-free core (gpu_device.h): TVM's time evaluator (timer.h), forked
# children with a deadline (child_run.h), the check blob (check_blob.h) and the GPU runtime (OpenCL through the ICD loader, CUDA
# and NVRTC dlopen()ed at run time). No LLVM, no Qt, no other engine library: the GPU device server
# (tools/gpu/) is built from it alone. The measure layer links it for the host side's GPU runners.
find_package(OpenCL)
add_library(tb_gpu_device STATIC ${_tb_gpu_dir}/timer.cpp ${_tb_gpu_dir}/child_run.cpp ${_tb_gpu_dir}/check_blob.cpp
  ${_tb_gpu_dir}/gpu_device.cpp ${_tb_gpu_dir}/opencl_device.cpp ${_tb_gpu_dir}/cuda_device.cpp)
add_library(tb::gpu_device ALIAS tb_gpu_device)
target_link_libraries(tb_gpu_device PUBLIC tb_common_cfg tb::gpu_module PRIVATE ${CMAKE_DL_LIBS})
if(OpenCL_FOUND)
  target_link_libraries(tb_gpu_device PRIVATE OpenCL::OpenCL)
  target_compile_definitions(tb_gpu_device PRIVATE TB_HAVE_OPENCL=1)
else()
  message(STATUS "OpenCL not found: the GPU runtime is built without OpenCL devices")
endif()

# What a GPU device server runs (gpu_executor.h): the GPU runtime behind engine/rpc's server.
add_library(tb_gpu_executor STATIC ${_tb_gpu_dir}/gpu_executor.cpp)
add_library(tb::gpu_executor ALIAS tb_gpu_executor)
target_link_libraries(tb_gpu_executor PUBLIC tb::gpu_device tb::rpc)
