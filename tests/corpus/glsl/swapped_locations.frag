#version 450
// See swapped_locations.vert: `b` here is the VS's `a`, `a` the VS's `b`, `d` the
// VS's `c` and `c` the VS's `d`.
layout(location = 0) in vec4 b;
layout(location = 1) in vec4 a;
layout(location = 2, component = 0) in float d;
layout(location = 2, component = 1) in float c;
layout(location = 0) out vec4 color;
void main() {
    color = vec4(b.xy * 0.75 + a.zw * 0.25, d * 0.5 + c * 0.25, b.z * a.y);
}
