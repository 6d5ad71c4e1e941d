#version 450
layout(location = 0) in vec2 v_uv;
layout(location = 1) in vec3 v_color;
layout(location = 2) in float v_scale;
layout(push_constant) uniform PC { mat4 mvp; int mode; float scale; } pc;
layout(binding = 0) uniform sampler2D tex;
layout(location = 0) out vec4 color;
void main() {
    vec4 t = texture(tex, v_uv);
    if (pc.mode == 2) t.rgb = vec3(dot(t.rgb, vec3(0.299, 0.587, 0.114)));
    color = vec4(t.rgb * v_color, t.a);
}
