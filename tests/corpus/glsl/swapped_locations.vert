#version 450
// Explicit locations that cross the names (issue 16): the FS's `b` at location 0
// is this stage's `a`, and the floats at components 0 and 1 of location 2 are
// crossed the same way. GL and Vulkan link them by location, not by name.
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec2 a_uv;
layout(location = 0) out vec4 a;
layout(location = 1) out vec4 b;
layout(location = 2, component = 0) out float c;
layout(location = 2, component = 1) out float d;
void main() {
    a = vec4(a_uv, 0.25, 1.0);
    b = vec4(0.5 * a_pos.y, 0.75, a_uv.x * a_uv.y, 1.0);
    c = a_pos.x;
    d = 0.5;
    gl_Position = vec4(a_pos, 1.0);
}
