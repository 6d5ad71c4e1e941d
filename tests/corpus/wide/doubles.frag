#version 450
#extension GL_ARB_gpu_shader_int64 : require
layout(location=0) flat in dvec3 n;
layout(location=2) flat in int64_t tag;
layout(location=3) in vec2 uv;
layout(location=0) out vec4 color;
void main() {
  double l = length(n) + double(tag >> 33);
  color = vec4(vec3(n) * float(l), uv.x + float(fract(n.z)));
}
