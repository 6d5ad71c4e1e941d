#version 450
// Push-constant driven material: mode selects the varying layout use.
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec2 a_uv;
layout(location = 2) in vec3 a_color;
layout(push_constant) uniform PC { mat4 mvp; int mode; float scale; } pc;
layout(location = 0) out vec2 v_uv;
layout(location = 1) out vec3 v_color;
layout(location = 2) out float v_scale;
void main() {
    v_uv = a_uv * pc.scale;
    v_color = pc.mode == 1 ? a_color : vec3(1.0);
    v_scale = pc.scale;
    gl_Position = pc.mvp * vec4(a_pos, 1.0);
}
